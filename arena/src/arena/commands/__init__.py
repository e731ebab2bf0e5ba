"""The `arena` commands, one module per command (loadcli.py holds sweep, latency, history and
stack); common.py is what they share. cli.py registers them; none imports a sibling but common."""
