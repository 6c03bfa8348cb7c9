"""The typed configuration: one frozen pydantic model per section of `conf/*.yaml`.

Models forbid unknown fields, so a typo in YAML, an environment variable or an
option is an error naming the setting, never a silently ignored value. Every
field has a description: `docs/config.md` is generated from them
(:mod:`core.config.reference`). Secrets are `SecretStr`: they print as
`**********` and come from the environment or from a file named by the
field's `*_file` sibling (:mod:`core.config.loader`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from core.config.secrets import OptionMap

__all__ = [
    "AdviseConfig",
    "DatasetConfig",
    "EmbeddedBrokerConfig",
    "JoinConfig",
    "KafkaConfig",
    "QualityConfig",
    "RunConfig",
    "Settings",
    "SimulateConfig",
    "SparkConfig",
    "TopicConfig",
    "WarehouseConfig",
]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _setting(default: Any, description: str, **constraints: Any) -> Any:
    return Field(default=default, description=description, **constraints)


class DatasetConfig(_Section):
    """Generated data: what `dkg run`, `dkg produce` and `dkg simulate` generate."""

    name: str = _setting(
        "ZIPF", "dataset (the seed's source type): ZIPF, COUNTRY_SKEW_R80, WORDS_EN, ..."
    )
    messages: int = _setting(100_000, "messages to generate", ge=0)
    rate: float = _setting(160.0, "messages per second of event time", gt=0)
    seed: int = _setting(42, "random seed of the generator; same seed, same messages")
    zipf_exponent: float = _setting(1.4, "exponent of ZIPF-like datasets", gt=0)
    keys: int = _setting(10_000, "key universe of ZIPF-like datasets", ge=1)
    shift_interval_s: float = _setting(60.0, "ZIPF_SHIFTING moves its hot set this often (event-time seconds)", gt=0)  # fmt: skip


class RunConfig(_Section):
    """The streaming job (`dkg run`): routing, windows, the queue model, batch sizes, triggers."""

    grouping: str = _setting("DYNAMIC_KEY,KEY,PARTIAL_KEY", "grouping(s): a name, a comma list with optional parameters, or 'all'")  # fmt: skip
    workers: int = _setting(10, "number of workers W", ge=1)
    splitters: int | None = _setting(None, "routing instances; null: one per Kafka partition", ge=1)  # fmt: skip
    format: str | None = _setting(None, "message format of a topic read as it is (see `dkg run --help`); null: generate `dataset`")  # fmt: skip
    worker_window_ms: int = _setting(15_000, "the workers' tumbling window (silver.worker_windows), event-time ms", gt=0)  # fmt: skip
    aggregation_window_ms: int = _setting(60_000, "gold's window (key counts, loads, metrics), event-time ms; a multiple of worker_window_ms", gt=0)  # fmt: skip
    process_ms: float = _setting(1.0, "the workers' service time per tuple, ms (the queue model's; with work=cpu each worker really spends it)", gt=0)  # fmt: skip
    load: float = _setting(0.8, "the workers' mean utilisation the queue model's arrivals make: tuples arrive at load x W / process_ms (0.8: 80 % busy on average; a hot key's worker far more)", gt=0)  # fmt: skip
    speed: float | None = _setting(None, "instead of load: event time runs this many times faster than the wall clock in the queue model (`dkg run --speed` also paces the producer); a live topic (continuous) runs at 1 unless set", gt=0)  # fmt: skip
    work: Literal["model", "cpu"] = _setting("model", "model: the workers' service is the queue model's; cpu: each worker also really spends process_ms of CPU per tuple in its Spark task (physical mode)")  # fmt: skip
    continuous: bool = _setting(False, "follow the topic and refresh gold as messages arrive, until stopped (Ctrl-C, SIGTERM)")  # fmt: skip
    # A batch that overruns its trigger starts the next at once, so a short one costs CPU
    # only where there is slack: at 50,000 msg/s, 0.5 s halves the latency of 2 s for
    # about twice the CPU per message (docs/benchmarks.md).
    trigger_interval_s: float = _setting(0.5, "continuous mode: seconds between micro-batches of each query", gt=0)  # fmt: skip
    bronze_max_offsets_per_trigger: int = _setting(3_000_000, "Kafka messages per micro-batch of the query that reads Kafka (bounds memory)", ge=1)  # fmt: skip
    silver_max_bytes_per_trigger: int = _setting(48 << 20, "bronze Parquet bytes per silver micro-batch, whole commits, where silver reads bronze (not Kafka)", ge=1)  # fmt: skip
    quality_gates: bool = _setting(True, "validate each layer with its data-quality suites as the job writes it")  # fmt: skip


class SimulateConfig(_Section):
    """`dkg simulate`: what differs from the streaming job."""

    splitters: int = _setting(1, "routing instances; tuples are dealt round-robin", ge=1)
    batch_size: int = _setting(10_000, "tuples routed (and state serialized) per call", ge=1)


class AdviseConfig(_Section):
    """`dkg advise`: how much of a topic to sample, what to compare, what merge cost to accept."""

    max_messages: int = _setting(200_000, "messages to sample, spread over every partition's offsets", ge=1)  # fmt: skip
    max_seconds: float = _setting(15.0, "stop sampling after this long", gt=0)
    chunks: int = _setting(8, "runs of consecutive messages per partition, evenly spaced", ge=1)  # fmt: skip
    workers: tuple[int, ...] = _setting((2, 4, 8, 16, 32), "W values compared beside run.workers (--workers: that W only)")  # fmt: skip
    loads: tuple[float, ...] = _setting((0.5, 0.8, 0.95), "loads compared beside run.load (--load: that load only)")  # fmt: skip
    max_dist_cost: float = _setting(2.0, "the largest dist_cost the recommendation accepts (it must also not exceed the capacity bought over KEY)", ge=1)  # fmt: skip


class QualityConfig(_Section):
    """Thresholds of the data-quality suites (`<layer>/expectations.py`).

    Metric ranges are the formulas' own bounds; `tolerance` widens them only
    by floating-point rounding. The upper bounds that depend on the run (worker
    ids below W, `dist_cost` at most W) come from the run itself.
    """

    mostly: float = _setting(1.0, "share of rows each row-level expectation must hold for", gt=0, le=1)  # fmt: skip
    min_count: int = _setting(1, "smallest valid tuple count (silver.routed, gold.key_counts)", ge=0)  # fmt: skip
    skew_s: tuple[float, float] = _setting((0.0, 1.0), "range of gold.distribution_metrics.skew_s")
    dist_cost_min: float = _setting(1.0, "smallest dist_cost (the largest is W)")
    stddev_pct_min: float = _setting(0.0, "smallest stddev_pct")
    imbalance_min: float = _setting(0.0, "smallest imbalance")
    tolerance: float = _setting(1e-9, "slack on metric bounds for floating-point rounding", ge=0)
    examples: int = _setting(3, "unexpected values shown per failed expectation", ge=1, le=20)


class JoinConfig(_Section):
    """`dkg join`: generated topics and join settings (times in ms of creation time)."""

    lefts: int = _setting(200_000, "left records; each has a right partner with match_ratio", ge=1)  # fmt: skip
    match_ratio: float = _setting(0.9, "share of lefts with a right partner", ge=0, le=1)
    rate: float = _setting(20_000.0, "left records per second of creation time", gt=0)
    partitions: int = _setting(4, "partitions of each generated topic", ge=1)
    gap_mean_ms: float = _setting(200.0, "a right is created this long after its left on average (exponential)", ge=0)  # fmt: skip
    gap_max_ms: int = _setting(1_000, "... at most this long", ge=0)
    jump_fraction: float = _setting(0.02, "records that arrive late within their partition", ge=0, le=1)  # fmt: skip
    jump_max_ms: int = _setting(300, "... by up to this much", ge=0)
    stall_at_fraction: float = _setting(0.5, "--stall-partition holds back a right partition from here on", ge=0, le=1)  # fmt: skip
    seed: int = _setting(42, "generator seed")
    window_ms: int = _setting(2_000, "largest creation-time difference of a pair", ge=0)
    sync_delay_ms: int = _setting(500, "expiry stays this far behind the slowest partition", ge=0)
    shards: int = _setting(2, "join state split by id over this many stateful groups", ge=1)
    max_offsets_per_trigger: int = _setting(200_000, "per topic and micro-batch (bounds memory)", ge=1)  # fmt: skip
    stats_window_ms: int = _setting(10_000, "gold.join_stats windows (of left creation time)", gt=0)  # fmt: skip


class TopicConfig(_Section):
    """Topics the project creates (generated datasets). Unset: the cluster's defaults apply."""

    partitions: int = _setting(4, "partitions of a topic the project creates", ge=1)
    replication_factor: int | None = _setting(None, "replication of a topic the project creates; null: the broker's default", ge=1)  # fmt: skip
    config: OptionMap = _setting({}, "topic settings of a topic the project creates, e.g. retention.ms")  # fmt: skip


class EmbeddedBrokerConfig(_Section):
    """The embedded Kafka-protocol broker (noida-db on loopback), used when no Kafka is named."""

    run_dir: Path = _setting(Path(".dkg/kafka"), "where it keeps its data, log and pid (`dkg kafka up` and `dkg run` share it)")  # fmt: skip
    port: int | None = _setting(None, "its port; null: a free one", ge=1, le=65535)


class KafkaConfig(_Section):
    """Kafka: where it is, how to connect, and settings passed to librdkafka as they are."""

    bootstrap_servers: str | None = _setting(None, "HOST:PORT[,...] of the user's Kafka; null: the embedded broker")  # fmt: skip
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = _setting("PLAINTEXT", "how clients connect")  # fmt: skip
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = _setting(None, "SASL mechanism (SASL_* protocols)")  # fmt: skip
    sasl_username: str | None = _setting(None, "SASL user name")
    sasl_password: SecretStr | None = _setting(None, "SASL password (secret: from DKG_KAFKA__SASL_PASSWORD or sasl_password_file)")  # fmt: skip
    sasl_password_file: Path | None = _setting(None, "a file holding the SASL password")
    ssl_ca_location: Path | None = _setting(None, "CA certificate(s) to verify the brokers (PEM)")
    ssl_certificate_location: Path | None = _setting(None, "client certificate (PEM)")
    ssl_key_location: Path | None = _setting(None, "client private key (PEM)")
    ssl_key_password: SecretStr | None = _setting(None, "password of the client key (secret: from DKG_KAFKA__SSL_KEY_PASSWORD or ssl_key_password_file)")  # fmt: skip
    ssl_key_password_file: Path | None = _setting(None, "a file holding the client key's password")
    client: OptionMap = _setting({}, "librdkafka settings for every client")
    consumer: OptionMap = _setting({}, "librdkafka settings for consumers (over `client`)")
    producer: OptionMap = _setting({}, "librdkafka settings for producers (over `client`)")
    admin: OptionMap = _setting({}, "librdkafka settings for admin clients (over `client`)")
    read_stall_s: float = _setting(60.0, "a read task gives up when its range brings no message for this long (a lost broker, offsets that never come)", gt=0)  # fmt: skip
    topics: TopicConfig = _setting(TopicConfig(), "topics the project creates")
    embedded: EmbeddedBrokerConfig = _setting(EmbeddedBrokerConfig(), "the embedded broker")


class SparkConfig(_Section):
    """The Spark session."""

    master: str = _setting("local[2]", "Spark master URL: local[N] or spark://HOST:PORT")
    driver_memory: str = _setting("4g", "driver heap; applies when this process starts the JVM")
    shuffle_partitions: int = _setting(2, "spark.sql.shuffle.partitions", ge=1)
    conf: OptionMap = _setting({}, "more spark.* settings, passed as they are (they win over the above)")  # fmt: skip


class WarehouseConfig(_Section):
    """Where tables live: a local folder or object storage."""

    uri: str = _setting("lakehouse", "warehouse root: a local path or s3://bucket/prefix")
    storage_options: OptionMap = _setting({}, "object-store settings as delta-rs names them (AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP, ...); the standard AWS_* environment variables fill them")  # fmt: skip
    state_dir: Path | None = _setting(None, "streaming checkpoints, Spark's catalog scratch and job records; null: inside a local warehouse, else .dkg/state/s3/<bucket>/<prefix> under the working directory (on a cluster: a folder shared with the executors)")  # fmt: skip


class Settings(_Section):
    """The whole configuration."""

    dataset: DatasetConfig = _setting(DatasetConfig(), "generated data")
    run: RunConfig = _setting(RunConfig(), "the streaming job")
    simulate: SimulateConfig = _setting(SimulateConfig(), "dkg simulate")
    advise: AdviseConfig = _setting(AdviseConfig(), "dkg advise")
    quality: QualityConfig = _setting(QualityConfig(), "data-quality thresholds")
    join: JoinConfig = _setting(JoinConfig(), "the stream-stream join")
    kafka: KafkaConfig = _setting(KafkaConfig(), "Kafka")
    spark: SparkConfig = _setting(SparkConfig(), "the Spark session")
    warehouse: WarehouseConfig = _setting(WarehouseConfig(), "table storage")
    groupings: dict[str, dict[str, Any]] = _setting({}, "parameters of each grouping, by name (see conf/base.yaml)")  # fmt: skip

    def grouping_params(self, name: str) -> dict[str, Any]:
        """Configured parameters of a grouping (case-insensitive name)."""
        for configured, params in self.groupings.items():
            if configured.upper() == name.upper():
                return dict(params or {})
        return {}
