"""The files of `git retcon demo`'s invoicing project, shipped as package data."""
