"""Kafka: the embedded broker, topic administration, the Spark source and the producer."""
