"""The deployed path (arena stack): nginx with TLS in front of an entry, its modes, its reading of CPU and h2load."""
