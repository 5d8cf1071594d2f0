"""Saved conversations, with reasoning trees and cited passages (SQLite via sqlite-utils)."""
