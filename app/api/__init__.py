"""The JSON API: thin views over app/domain, one schema layer and one error layer."""
