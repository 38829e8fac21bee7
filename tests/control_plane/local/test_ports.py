"""Port checks name the port, what it is for, who holds it and the setting that moves it."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from control_plane.local import (
    PortTaken,
    PortWanted,
    check_ports_free,
    ephemeral_port_range,
    free_port,
    port_holder,
    port_is_free,
    ports,
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A child process listening on a free loopback port until the test ends."""
    port = free_port()
    code = (
        "import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); "
        "print('ready', flush=True); time.sleep(600)"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        yield port
    finally:
        child.kill()
        child.wait()


def test_a_free_port_is_free() -> None:
    port = free_port()
    assert port_is_free("127.0.0.1", port)
    assert port_holder(port) is None
    check_ports_free([PortWanted("127.0.0.1", port, "control plane", "PRESSROOM_PORT")])


def test_a_chosen_port_is_outside_the_range_outgoing_connections_draw_from_and_never_chosen_twice() -> None:
    low, high = ephemeral_port_range()
    assert 1024 <= low <= high <= 65535
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert not [port for port in ports if low <= port <= high]
    assert all(port_is_free("127.0.0.1", port) for port in ports)


def test_a_held_port_is_not_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen()
        taken = held.getsockname()[1]
        # Forget what was handed out and offer the held port first: free_port must skip it for being held.
        monkeypatch.setattr(ports, "_handed_out", set())
        monkeypatch.setattr(random, "shuffle", lambda candidates: candidates.sort(key=lambda port: port != taken))
        chosen = free_port()
        assert chosen != taken
        assert port_is_free("127.0.0.1", chosen)


def test_a_taken_port_names_its_holder_and_the_setting(listener: int) -> None:
    assert not port_is_free("127.0.0.1", listener)
    holder = port_holder(listener)
    assert holder is not None and holder.pid is not None
    assert holder.command.startswith("python") and "socket" in holder.command

    with pytest.raises(PortTaken) as raised:
        check_ports_free(
            [
                PortWanted("127.0.0.1", free_port(), "public site", "PRESSROOM_SITE_PORT"),
                PortWanted("127.0.0.1", listener, "control plane", "PRESSROOM_PORT"),
            ]
        )
    message = str(raised.value)
    assert raised.value.code == "port_taken"
    assert message.startswith(f"port {listener} (control plane) is taken by pid {holder.pid}: python")
    assert message.endswith("— stop it or set PRESSROOM_PORT")
    assert "public site" not in message


def test_a_port_held_on_another_address_is_taken_too() -> None:
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free("127.0.0.1", port)
