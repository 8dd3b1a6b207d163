"""``python -m openmsd.cli``: the ``openmsd`` command."""

from openmsd.cli import main

main()
