"""Who is submitting: the account a login provider verified, else the network address, read right to
left past trusted proxies only, so a forged header changes nothing (docs/site.md, "Sign-in and
quotas")."""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The key of a connection relayed by a host the site does not trust (:func:`network_address`).
SAME_HOST = "same-host"


@dataclass(frozen=True)
class Visitor:
    """The identity a submission counts against."""

    #: ``account`` (signed in through the login provider) or ``address`` (network address)
    kind: str
    #: what the daily limit counts by (hashed again before it is stored)
    key: str
    #: the verified account shown on the board (None for an address)
    account: str | None = None
    #: the identity provider that verified the account
    issuer: str | None = None


# --- the login provider ----------------------------------------------------------------------


def _auth_section() -> dict[str, Any]:
    import streamlit as st

    try:
        section = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - no secrets file at all: no login provider
        return {}
    return dict(section) if section else {}


def login_provider() -> str | None:
    """The name ``st.login`` takes: ``ETC_LOGIN_PROVIDER``, else the only named one."""
    from leaderboard import settings

    chosen = settings.login_provider()
    if chosen:
        return chosen
    named = [k for k, v in _auth_section().items() if isinstance(v, dict)]
    return None if "client_id" in _auth_section() or not named else sorted(named)[0]


def login_configured() -> bool:
    """Whether the operator configured a login provider (an ``[auth]`` section with one)."""
    section = _auth_section()
    return "client_id" in section or any(isinstance(v, dict) for v in section.values())


def check_login_setup() -> None:
    """``ConfigError`` saying what to do when a provider is configured but cannot work."""
    from etclib.core.errors import ConfigError

    if not login_configured():
        return
    try:
        import authlib  # noqa: F401 - st.login needs it
    except ImportError:
        raise ConfigError(
            "A login provider is configured ([auth] in .streamlit/secrets.toml) but Authlib is "
            "not installed: pip install Authlib (requirements.txt lists it)."
        ) from None
    section = _auth_section()
    missing = [k for k in ("redirect_uri", "cookie_secret") if not section.get(k)]
    if missing:
        raise ConfigError(
            f"[auth] in .streamlit/secrets.toml lacks {', '.join(missing)}; see "
            ".streamlit/secrets.toml.example."
        )


def account_name(user: Any) -> str | None:
    """The account to show for ``st.user``: its first ``ETC_LB_ACCOUNT_CLAIMS`` claim."""
    from leaderboard import settings

    for claim in settings.account_claims():
        value = user.get(claim) if hasattr(user, "get") else None
        if value and str(value).strip():
            return str(value).strip()[:120]
    return None


# --- network addresses -----------------------------------------------------------------------


def _parse(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text:
        return None
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    # An IPv4 client of a server listening on "::" arrives as ::ffff:a.b.c.d: the same host as
    # a.b.c.d for ETC_TRUSTED_PROXIES and for the quota.
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip


def _key(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """The quota's key for an address; :data:`SAME_HOST` for loopback, whatever header it sent."""
    return SAME_HOST if ip.is_loopback else str(ip)


def _within(addr: str | None, networks: Sequence[Network]) -> bool:
    ip = _parse(addr)
    return ip is not None and any(ip in n for n in networks)


def server_trusted() -> list[Network]:
    """Addresses whose ``X-Forwarded-For`` uvicorn itself applies (``FORWARDED_ALLOW_IPS``)."""
    raw = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
    if raw.strip() == "*":
        return [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]
    out = []
    for part in raw.split(","):
        try:
            out.append(ipaddress.ip_network(part.strip(), strict=False))
        except ValueError:
            continue
    return out


def _server_pick(chain: list[str], trusted: Sequence[Network]) -> str | None:
    """The entry of ``chain`` uvicorn reports: the right-most it does not trust."""
    for entry in reversed(chain):
        if not _within(entry, trusted):
            return entry
    return chain[0] if chain else None


def network_address(
    reported: str | None,
    forwarded_for: Iterable[str],
    trusted: Sequence[Network],
    server: Sequence[Network] | None = None,
) -> str:
    """The visitor's address for the quota, or :data:`SAME_HOST` (``reported``: the server's client
    address, None for loopback; ``trusted``: ``ETC_TRUSTED_PROXIES``; ``server``:
    :func:`server_trusted`).

    A peer the web server already replaced by a header entry is believed only if the operator trusts
    a host the server trusts; no value a trusted proxy did not write gives a new key."""
    server = server_trusted() if server is None else server
    chain = [e.strip() for v in forwarded_for for e in str(v).split(",") if e.strip()]
    if chain and _replaced(reported, _server_pick(chain, server)):
        peer_trusted = any(n.overlaps(t) for n in server for t in trusted if n.version == t.version)
        return _walk(chain, trusted, SAME_HOST) if peer_trusted else SAME_HOST
    peer = _parse(reported) if reported is not None else None
    if peer is None:  # a loopback peer (or, with no header, a client that is no address)
        peer = ipaddress.ip_address("127.0.0.1")
    if chain and any(peer in n for n in trusted):
        return _walk(chain, trusted, _key(peer))
    return _key(peer)


def _replaced(reported: str | None, pick: str | None) -> bool:
    """Whether the server reported ``pick``, a header entry, as its client."""
    if reported is not None and _parse(reported) is None:
        return True
    entry = _parse(pick)
    if entry is None:
        return False
    return entry.is_loopback if reported is None else _parse(reported) == entry


def _walk(chain: list[str], trusted: Sequence[Network], relay: str) -> str:
    """Right to left through the trusted hops from ``relay``, to the first untrusted one."""
    for entry in reversed(chain):
        ip = _parse(entry)
        if ip is None:
            return relay
        relay = _key(ip)
        if not any(ip in n for n in trusted):
            return relay
    return relay


def submitter_key(kind: str, ident: str) -> str:
    """The daily limit's key for an identity (hashed once more when stored)."""
    return hashlib.sha256(f"{kind}:{ident}".encode()).hexdigest()[:32]


# --- the current visitor ---------------------------------------------------------------------


def current_visitor() -> Visitor | None:
    """The signed-in account, else the address; None when nobody is signed in."""
    import streamlit as st

    if login_configured():
        user = st.user
        if not user.get("is_logged_in"):
            return None
        issuer = str(user.get("iss") or login_provider() or "default")
        subject = str(user.get("sub") or user.get("email") or "")
        if not subject:
            return None
        return Visitor(
            "account",
            submitter_key("account", f"{issuer} {subject}"),
            account_name(user) or subject,
            issuer,
        )
    return address_visitor()


def address_visitor() -> Visitor:
    """The visitor as their network address (see the module docstring)."""
    import streamlit as st

    from leaderboard import settings

    headers = st.context.headers
    forwarded = headers.get_all("X-Forwarded-For") if headers is not None else []
    reported = st.context.ip_address
    if not isinstance(reported, str):  # no client address known (e.g. a test's mock session)
        reported = None
    address = network_address(reported, forwarded, settings.trusted_proxies())
    return Visitor("address", submitter_key("address", address))


def limit_key() -> str:
    """What every per-visitor limit counts by: the account, else the network address."""
    return (current_visitor() or address_visitor()).key
