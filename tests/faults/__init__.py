"""Fault and fuzz suites: daemons killed at random moments, hostile messages and inputs."""
