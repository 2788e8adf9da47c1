"""Readers for log formats other than our own (each translated into our record kinds)."""
