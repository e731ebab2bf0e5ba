"""renard in Python (spec/SPEC.md): an asyncio Protocol per connection, the spec's parser as
compiled regular expressions, uvloop's event loop when installed."""
