"""The command line's shared pieces (common.py); cli.py registers the commands."""
