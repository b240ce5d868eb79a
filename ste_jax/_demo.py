"""Backward-compatible home of the demo helpers; the command line lives in :mod:`ste_jax._cli`."""

from ste_jax._cli import DEMO_DATASET as DATASET
from ste_jax._cli import bundled_dataset_path as bundled_dataset_path

__all__ = ["DATASET", "bundled_dataset_path"]
