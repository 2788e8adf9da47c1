"""The visualdl server: ``create_app`` builds the Flask app, ``cli.main`` runs it."""

from visualdl.server.app import create_app

__all__ = ["create_app"]
