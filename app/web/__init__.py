"""The web layer both surfaces share (the JSON API and the hosted pages): who the client is,
rate limits, redirect targets, the browser session and provider sign-in glue, and error handling."""
