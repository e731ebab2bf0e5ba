"""An entry: its manifest, its build, its launch, its own tests, the scaffold, and servers from
outside the repository.
"""
