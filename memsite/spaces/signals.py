"""Sent inside the transaction that deletes a space, before its row goes: the rooms whose rows
the database does not cascade (the memory tree) delete the space's rows themselves."""

from django.dispatch import Signal

space_deleting = Signal()  # sender: Space; keyword: space
