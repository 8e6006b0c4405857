-- What a token may do: NULL is its person's whole right (every token made before scopes);
-- otherwise the JSON of slipway-api's TokenScope ({"read_only", "apps", "secrets"}).
ALTER TABLE api_token ADD COLUMN scope TEXT;
