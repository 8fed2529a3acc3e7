"""Benchmarks that are run by hand or by `make bench`, not by the test suite (see bench/README.md)."""
