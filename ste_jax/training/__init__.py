"""Training (paper §4.1 and §4.5, Algorithm ``ste_training``): losses, temperature schedules, the
pure jit-compiled train step, the eager :func:`fit` driver and pairwise-probability calibration.

Built on Flax NNX's functional API (``nnx.split`` / ``nnx.merge``) and optax directly.
"""

from ._calibration import ReliabilityDiagram as ReliabilityDiagram
from ._calibration import TemperatureScaling as TemperatureScaling
from ._calibration import calibrate_temperature as calibrate_temperature
from ._calibration import fit_temperature as fit_temperature
from ._calibration import reliability_diagram as reliability_diagram
from ._fit import FitHistory as FitHistory
from ._fit import FitResult as FitResult
from ._fit import FitSettings as FitSettings
from ._fit import fit as fit
from ._losses import ObjectiveTerms as ObjectiveTerms
from ._losses import calibration_regularizer as calibration_regularizer
from ._losses import pairwise_cross_entropy as pairwise_cross_entropy
from ._losses import sharpness_regularizer as sharpness_regularizer
from ._losses import ste_objective as ste_objective
from ._schedules import Temperatures as Temperatures
from ._schedules import constant_temperature as constant_temperature
from ._schedules import exponential_anneal as exponential_anneal
from ._schedules import temperature_schedule as temperature_schedule
from ._step import make_log_loss_fn as make_log_loss_fn
from ._step import make_ste_loss as make_ste_loss
from ._step import make_train_step as make_train_step

__all__ = [
  "FitHistory",
  "FitResult",
  "FitSettings",
  "ObjectiveTerms",
  "ReliabilityDiagram",
  "TemperatureScaling",
  "Temperatures",
  "calibrate_temperature",
  "calibration_regularizer",
  "constant_temperature",
  "exponential_anneal",
  "fit",
  "fit_temperature",
  "make_log_loss_fn",
  "make_ste_loss",
  "make_train_step",
  "pairwise_cross_entropy",
  "reliability_diagram",
  "sharpness_regularizer",
  "ste_objective",
  "temperature_schedule",
]
