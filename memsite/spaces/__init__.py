"""Spaces, their members' roles and the API tokens that act for members: who may do what.
Explained in docs/spaces.md."""
