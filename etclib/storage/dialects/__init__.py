"""One module per storage engine, each a :class:`~etclib.storage.dialect.Dialect` named
``DIALECT`` and registered in :data:`etclib.storage.ENGINES`."""
