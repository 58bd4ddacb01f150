#!/usr/bin/env python3
"""Writes 2 MiB to stdout: over the cap."""
import sys

sys.stdin.read()
sys.stdout.write("x" * (2 << 20))
