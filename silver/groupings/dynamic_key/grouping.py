"""DYNAMIC_KEY: the grouping object that the simulator and the Spark job call."""

from __future__ import annotations

import numpy as np

from silver.groupings.base import Grouping, HotKey
from silver.groupings.dynamic_key.adaptive_rule import route_adaptive_rule
from silver.groupings.dynamic_key.params import DynamicKeyParams
from silver.groupings.dynamic_key.seed_rule import BABY, FREE, OLD, TEEN, route_seed_rule
from silver.groupings.dynamic_key.state import DynamicKeyState, initial_dynamic_key_state
from silver.groupings.hashing import KeyHashes

__all__ = ["DynamicKeyGrouping"]

_SPACE_NAMES = {BABY: "baby", TEEN: "teenage", OLD: "old"}


class DynamicKeyGrouping(Grouping[DynamicKeyParams, DynamicKeyState]):
    """Cold keys keep their initial candidates; hot keys grow a pool of workers."""

    name = "DYNAMIC_KEY"
    params_type = DynamicKeyParams
    state_type = DynamicKeyState

    def initial_state(self) -> DynamicKeyState:
        return initial_dynamic_key_state(self.workers, self.params)

    def _int_params(self) -> np.ndarray:
        p = self.params
        return np.array(
            [p.initial_pool, p.teen_to_old_every, p.gc_after_ms, p.warm_up_ms,
             p.check_interval_ms, p.key_space_cycle_ms],
            dtype=np.int64,
        )  # fmt: skip

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        s, p = self.state, self.params
        if p.mode == "seed":
            caps = np.array(p.space_capacities(), dtype=np.int64)
            out = route_seed_rule(
                hashes.fingerprint, hashes.home, event_times_ms, self._int_params(), caps,
                s.clock, s.sent, s.ks_fp, s.ks_count, s.ks_space, s.ks_last_seen, s.ks_pool,
                s.ks_last_check, s.ks_index,
            )  # fmt: skip
        else:
            slack = p.placement_slack if p.placement == "hashed" else -1.0
            floats = np.array(
                [p.hot_share_factor / self.workers, p.headroom, p.overload_tolerance, p.decay,
                 p.relief_share_factor / self.workers, slack, p.overload_share * self.workers]
            )  # fmt: skip
            out = route_adaptive_rule(
                hashes.fingerprint, hashes.home, event_times_ms, self._int_params(), floats,
                s.clock, s.weighted, s.sent, s.sk_fp, s.sk_counts, s.sk_errors, s.sk_heap,
                s.sk_heap_pos, s.sk_index, s.sk_hot, s.sk_last_check, s.hot_slot, s.hot_size,
                s.hot_members,
            )  # fmt: skip
        self._remember_names(hashes)
        return out

    def _tracked_fingerprints(self) -> np.ndarray:
        s = self.state
        if self.params.mode == "seed":
            return s.ks_fp[s.ks_space == OLD]
        return s.sk_fp[s.hot_slot[s.hot_slot >= 0]]

    def _named_fingerprints(self) -> np.ndarray:
        # Names are kept only for keys that are reported, so state stays small.
        s = self.state
        if self.params.mode == "seed":
            return s.ks_fp[s.ks_space != FREE]
        return self._tracked_fingerprints()

    def _remember_names(self, hashes: KeyHashes) -> None:
        s = self.state
        tracked = self._named_fingerprints()
        known = dict(zip(s.name_fps.tolist(), s.names.tolist(), strict=True))
        if all(int(fp) in known for fp in tracked) and len(known) == len(tracked):
            return
        batch_names = hashes.names_of(tracked)
        names = [known.get(int(fp)) or batch_names[i] or "" for i, fp in enumerate(tracked)]
        s.name_fps = tracked.astype(np.int64).copy()
        s.names = np.array(names, dtype=str) if names else np.zeros(0, dtype="<U1")

    def _name(self, fp: int) -> str:
        for known_fp, name in zip(
            self.state.name_fps.tolist(), self.state.names.tolist(), strict=True
        ):
            if known_fp == fp and name:
                return str(name)
        return f"#{fp & 0xFFFFFFFFFFFFFFFF:016x}"

    def key_spaces(self) -> dict[str, list[str]]:
        """Seed mode: the keys in each generational space, most frequent first."""
        s = self.state
        spaces: dict[str, list[str]] = {name: [] for name in _SPACE_NAMES.values()}
        for slot in np.argsort(-s.ks_count, kind="stable"):
            if s.ks_space[slot] in _SPACE_NAMES:
                spaces[_SPACE_NAMES[int(s.ks_space[slot])]].append(self._name(int(s.ks_fp[slot])))
        return spaces

    def pool_of(self, fingerprint: int) -> tuple[int, ...]:
        """Current candidate workers of a tracked key (empty if it is not tracked)."""
        s = self.state
        if self.params.mode == "seed":
            slots = np.flatnonzero((s.ks_fp == fingerprint) & (s.ks_space == OLD))
            if len(slots) == 0:
                return ()
            return tuple(self._ring(slots[0], int(s.ks_pool[slots[0]])))
        for h in np.flatnonzero(s.hot_slot >= 0):
            if s.sk_fp[s.hot_slot[h]] == fingerprint:
                return tuple(int(w) for w in s.hot_members[h, : s.hot_size[h]])
        return ()

    def _ring(self, slot: int, pool: int) -> list[int]:
        from silver.groupings.hashing import stable_hash

        name = self._name(int(self.state.ks_fp[slot]))
        home = stable_hash(name) % self.workers
        return [(home + j) % self.workers for j in range(min(pool, self.workers))]

    def hot_keys(self) -> list[HotKey]:
        """Old keys (seed) or hot keys (adaptive) with more than ``initial_pool`` workers."""
        s = self.state
        total = max(int(s.clock[3]), 1)
        rows = []
        for fp in self._tracked_fingerprints():
            pool = self.pool_of(int(fp))
            if len(pool) <= self.params.initial_pool:
                continue
            if self.params.mode == "seed":
                share = float(s.ks_count[s.ks_fp == fp][0]) / total
                reason = "old-space key whose candidates exceeded loadToScaleUp"
            else:
                slot = int(np.flatnonzero(s.sk_fp == fp)[0])
                share = float(s.sk_counts[slot] / max(s.weighted[0], 1.0))
                reason = f"estimated share {share:.4f} >= {self.params.hot_share_factor / self.workers:.4g}"
            rows.append(
                HotKey(key=self._name(int(fp)), pool_size=len(pool), workers=pool,
                       estimated_share=share, reason=reason)
            )  # fmt: skip
        return sorted(rows, key=lambda r: -r.estimated_share)
