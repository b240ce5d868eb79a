"""Run a Python script in a fresh process with simulated CPU devices; read its last line as JSON.

XLA fixes the number of host devices when JAX initializes, so tests of multi-device code run their
checks in a subprocess with ``--xla_force_host_platform_device_count``.
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_on_cpu_devices(script: str, *, devices: int = 4, timeout: int = 600):
  """The JSON value the script prints on its last stdout line, run with ``devices`` CPU devices.

  Args:
    script: Python source, run with ``python -c`` in the repository root.
    devices: simulated CPU devices (appended to the caller's ``XLA_FLAGS``).
    timeout: seconds before the process is killed (the test then fails).

  Returns:
    The parsed last line of stdout. The test fails with the script's stderr if it exits non-zero.
  """
  flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}"
  env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")
  proc = subprocess.run(
    [sys.executable, "-c", script],
    capture_output=True,
    text=True,
    env=env,
    cwd=ROOT,
    timeout=timeout,
  )
  assert proc.returncode == 0, proc.stderr[-3000:]
  return json.loads(proc.stdout.strip().splitlines()[-1])
