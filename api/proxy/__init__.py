"""The OpenAI-compatible proxy: `POST /v1/chat/completions` and `/v1/responses` that decorate, call the
agent's provider, report and answer in the provider's own shape, streamed or not."""
