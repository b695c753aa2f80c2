"""Package layout: ``openapi/`` and ``migrations/`` live at the repository root (DESIGN.md);
a wheel carries them as ``mockkube/_openapi`` and ``mockkube/_migrations`` (found by
``schema.openapi_dir`` and ``db.migrations_dir``)."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["mockkube", "mockkube.*"])
    + ["mockkube._openapi", "mockkube._migrations", "mockkube._migrations.versions"],
    package_dir={"mockkube._openapi": "openapi", "mockkube._migrations": "migrations"},
    package_data={
        "mockkube._openapi": ["*.json", "v3/*.json"],
        "mockkube._migrations": ["*.py", "*.mako"],
        "mockkube._migrations.versions": ["*.py"],
        "mockkube": [
            "**/*.json",
            "**/*.yaml",
            "control/ui/*.html",
            "control/ui/vendor/*",
            "generated/pluginapi/*.proto",
            "generated/pluginapi/*.pyi",
        ],
    },
)
