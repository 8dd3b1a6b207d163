"""The web application and HTTP API over a corpus (``openmsd serve CORPUS``), and the MCP
server for AI assistants (``openmsd mcp CORPUS``)."""

from openmsd.server.app import create_app, serve
from openmsd.server.mcp import McpTools, mcp_server, run_mcp
from openmsd.server.resources import BATCH_ENV, THREADS_ENV, Resources, indexed_models

__all__ = [
    "BATCH_ENV", "THREADS_ENV", "McpTools", "Resources", "create_app", "indexed_models",
    "mcp_server", "run_mcp", "serve",
]
