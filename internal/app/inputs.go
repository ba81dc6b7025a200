package app

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// inputRead records what serve made of one of the site's inputs (the
// lockfile or the manifest at path): err nil, it was accepted (or had not
// changed since it was); otherwise it was refused, and the components stay
// as the last accepted input left them. A refusal is loud in the log and
// stored, so that the dashboard, the summary and /metrics say it on every
// instance until the input is accepted again. The database failing, or
// serve stopping, refuses nothing: the input was not judged.
func (a *App) inputRead(ctx context.Context, input readmodel.Input, path string, err error) {
	switch {
	case err == nil:
		cleared, cerr := a.Store.InputAccepted(ctx, input)
		if cerr != nil {
			a.Logger.WarnContext(ctx, "record that the "+input.Noun()+" was accepted", "path", path, "error", cerr)
			return
		}
		if cleared {
			a.Logger.InfoContext(ctx, input.Noun()+" accepted again", "path", path)
			a.Reads.Changed()
		}
	case errors.Is(err, context.Canceled) && ctx.Err() != nil, store.IsUnavailable(err),
		errors.Is(err, store.ErrTreeMoved): // another sync wrote the tree meanwhile: the next look applies it again
		a.Logger.WarnContext(ctx, input.Noun()+" not applied", "path", path, "error", err)
	default:
		a.Logger.ErrorContext(ctx, input.Noun()+" refused; keeping the installed components as they were", "path", path, "error", err)
		if rerr := a.Store.InputRefused(ctx, input, path, err.Error()); rerr != nil {
			a.Logger.WarnContext(ctx, "record that the "+input.Noun()+" was refused", "path", path, "error", rerr)
			return
		}
		a.Reads.Changed()
	}
}
