"""Packaging glue that pyproject.toml cannot express on its own: the browser app lives in
``web/`` at the repository root and ships inside the wheel as the ``visualdl._web``
package. ``packages.find`` would not list a package whose folder is mapped from elsewhere,
so the package list is given here. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["visualdl", "visualdl.*"]) + ["visualdl._web"])
