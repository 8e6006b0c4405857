-- A removed person's row gives up its e-mail address (so an invite to it makes a new person,
-- who inherits nothing: not the old person's private secrets, not their sign-in link) and keeps
-- it here, so single sign-on can tell a removed person from a stranger.
ALTER TABLE account_user ADD COLUMN removed_email TEXT;
CREATE INDEX account_user_removed_email ON account_user (removed_email);
