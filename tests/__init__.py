"""durable_nb's tests; shared helpers live in :mod:`tests.support`."""
