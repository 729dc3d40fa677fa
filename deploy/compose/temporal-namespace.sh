#!/bin/sh
# Creates Lethe's Temporal namespace if it does not exist yet. Idempotent.
set -eu
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done
temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$LETHE_TEMPORAL_NAMESPACE" \
  || temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$LETHE_TEMPORAL_NAMESPACE" --retention 72h
