"""The shared core every layer builds on: configuration, runtime, Kafka, Spark, storage, Delta tables."""
