"""Measurement: the model zoo and its catalogue, the worker process and its protocol, and the jobs it runs
(capture, sweep, naive). Only `zoo`, `environment`, `harness`, `capture`, `sweep`, `naive` and `jobs`
import torch, and they run in the worker; `catalog`, `protocol`, `worker` and `client` are the caller's
side and import no torch."""
