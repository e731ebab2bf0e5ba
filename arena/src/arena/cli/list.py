"""`arena list`: the entries as a table (language, tier, availability)."""

from __future__ import annotations

import click

from ..ui import console, entries_table
from .common import load_entries


@click.command("list")
@click.pass_context
def list_cmd(ctx):
    """A table of the entries: language, tier and availability."""
    console.print(entries_table(load_entries(ctx, ())))
