"""The paper's published planted-core numbers (soft_tournament_equilibrium.tex, §6, Tables 2-5).

Each entry is ``(mean, 95% half-width)`` unless stated otherwise; the planted-core benchmark
(:mod:`ste_jax.benchmarking._planted_core`) prints its numbers next to these.
"""

# Table "Oracle sanity checks" (tab:v2_oracle, paper Table 2): case -> (n, |C|, TC F1, UC F1,
# TC AUROC, UC AUROC, TC gap). Single values, no intervals.
PAPER_TABLE2 = {
  "Transitive singleton": (30, 1, 1.000, 1.000, 1.000, 1.000, 0.991),
  "Planted 3-core": (30, 3, 1.000, 1.000, 1.000, 1.000, 0.992),
  "Planted 5-core": (50, 5, 1.000, 1.000, 1.000, 1.000, 0.992),
}

# Table "Finite-sample planted-core recovery for m >= 5" (tab:v2_recovery_by_m, paper Table 3).
PAPER_TABLE3 = {
  5: {
    ("STE-post", "f1"): (0.588, 0.014),
    ("BTL", "f1"): (0.545, 0.013),
    ("Win", "f1"): (0.541, 0.013),
    ("STE-post", "auprc"): (0.672, 0.014),
    ("BTL", "auprc"): (0.644, 0.011),
    ("Win", "auprc"): (0.639, 0.011),
  },
  10: {
    ("STE-post", "f1"): (0.746, 0.015),
    ("BTL", "f1"): (0.572, 0.013),
    ("Win", "f1"): (0.568, 0.013),
    ("STE-post", "auprc"): (0.794, 0.014),
    ("BTL", "auprc"): (0.672, 0.012),
    ("Win", "auprc"): (0.667, 0.012),
  },
  20: {
    ("STE-post", "f1"): (0.908, 0.011),
    ("BTL", "f1"): (0.590, 0.014),
    ("Win", "f1"): (0.584, 0.014),
    ("STE-post", "auprc"): (0.928, 0.009),
    ("BTL", "auprc"): (0.686, 0.012),
    ("Win", "auprc"): (0.681, 0.012),
  },
  50: {
    ("STE-post", "f1"): (0.979, 0.004),
    ("BTL", "f1"): (0.606, 0.015),
    ("Win", "f1"): (0.601, 0.015),
    ("STE-post", "auprc"): (0.993, 0.002),
    ("BTL", "auprc"): (0.694, 0.012),
    ("Win", "auprc"): (0.687, 0.012),
  },
}
# Section 6.3 text ("Finite-Sample Planted-Core Recovery"): the pooled m >= 5 means.
PAPER_POOLED_M5 = {
  ("STE-post", "f1"): (0.805, 0.007),
  ("BTL", "f1"): (0.578, 0.007),
  ("Win", "f1"): (0.573, 0.007),
  ("STE-post", "auprc"): (0.847, 0.006),
  ("BTL", "auprc"): (0.674, 0.006),
  ("Win", "auprc"): (0.669, 0.006),
}

# Table "Robustness to missing comparisons for m >= 5" (tab:v2_missing, paper Table 4).
PAPER_TABLE4 = {
  0.0: {
    ("STE-post", "f1"): (0.879, 0.012),
    ("BTL", "f1"): (0.631, 0.014),
    ("Win", "f1"): (0.630, 0.014),
    ("STE-post", "auprc"): (0.906, 0.010),
    ("BTL", "auprc"): (0.723, 0.012),
    ("Win", "auprc"): (0.723, 0.012),
  },
  0.1: {
    ("STE-post", "f1"): (0.856, 0.012),
    ("BTL", "f1"): (0.609, 0.014),
    ("Win", "f1"): (0.606, 0.014),
    ("STE-post", "auprc"): (0.889, 0.011),
    ("BTL", "auprc"): (0.703, 0.012),
    ("Win", "auprc"): (0.700, 0.012),
  },
  0.3: {
    ("STE-post", "f1"): (0.781, 0.015),
    ("BTL", "f1"): (0.557, 0.013),
    ("Win", "f1"): (0.550, 0.013),
    ("STE-post", "auprc"): (0.825, 0.013),
    ("BTL", "auprc"): (0.654, 0.012),
    ("Win", "auprc"): (0.648, 0.012),
  },
  0.5: {
    ("STE-post", "f1"): (0.705, 0.015),
    ("BTL", "f1"): (0.516, 0.013),
    ("Win", "f1"): (0.506, 0.013),
    ("STE-post", "auprc"): (0.766, 0.014),
    ("BTL", "auprc"): (0.615, 0.012),
    ("Win", "auprc"): (0.604, 0.011),
  },
}

# Table "Bootstrap recovery stability on planted cyclic cores" (tab:v2_bootstrap, paper Table 5).
# Our "STE-win" is compared with the paper's "STE-weighted-mean" (not defined in the paper).
PAPER_TABLE5 = {
  "STE-post": {
    "f1": (0.803, 0.102),
    "jaccard": (0.602, 0.168),
    "auroc": (0.945, 0.038),
    "entropy": (1.515, 0.476),
  },
  "STE-win": {
    "f1": (0.728, 0.035),
    "jaccard": (0.439, 0.044),
    "auroc": (0.940, 0.017),
    "entropy": (2.371, 0.206),
  },
  "BTL": {
    "f1": (0.697, 0.064),
    "jaccard": (0.598, 0.064),
    "auroc": (0.967, 0.010),
    "entropy": (1.432, 0.724),
  },
  "Win": {
    "f1": (0.700, 0.071),
    "jaccard": (0.630, 0.075),
    "auroc": (0.968, 0.011),
    "entropy": (1.206, 0.803),
  },
}
PAPER_TABLE5_NAMES = {
  "STE-post": "STE-posterior-edge",
  "STE-win": "STE-weighted-mean",
  "BTL": "BTL",
  "Win": "Win-rate",
}
