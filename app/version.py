"""The release this code is (CHANGELOG.md; docs/operators/upgrading.md says how releases are
made and upgraded to). pyproject.toml reads it from here, /health and `flask version` report it."""

VERSION = "0.2.0"
