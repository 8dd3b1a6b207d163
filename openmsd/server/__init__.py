"""The web application and HTTP API over a corpus (``openmsd serve CORPUS``)."""
