-- name: SettingGet :one
SELECT value FROM app_settings WHERE key = @key;
