"""Shared parsers, written once: shell/Hydra, YAML with line marks, Dockerfile instructions."""
