"""A local fake of the OpenAI, Anthropic and Gemini APIs, answered by the simulator.

Rehearse limits, faults and budgets for free: `arena fake-server`, or
`FakeServer(config)` in-process (tests, benchmarks).
"""

from arena.fakeserver._config import (
    FakeModel,
    FakeServerConfig,
    FaultConfig,
    ServerLimits,
    load_fake_config,
)
from arena.fakeserver._server import (
    FakeProviderServer,
    FakeServer,
    bind_socket,
    create_app,
    start_site,
)

__all__ = [
    "FakeModel",
    "FakeProviderServer",
    "FakeServer",
    "FakeServerConfig",
    "FaultConfig",
    "ServerLimits",
    "bind_socket",
    "create_app",
    "load_fake_config",
    "start_site",
]
