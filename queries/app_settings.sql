-- name: SettingGet :one
SELECT value FROM app_settings WHERE key = @key;

-- name: SettingEnsure :one
-- Stores value unless the key is set, and returns what is stored: the first
-- instance to ask decides, every later one reads its choice.
WITH inserted AS (
    INSERT INTO app_settings (key, value) VALUES (@key, @value)
    ON CONFLICT (key) DO NOTHING
    RETURNING value
)
SELECT value FROM inserted
UNION ALL
SELECT value FROM app_settings WHERE key = @key AND NOT EXISTS (SELECT 1 FROM inserted);
