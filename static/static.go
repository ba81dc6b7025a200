// Package static embeds the AdminCP's CSS, JavaScript and images so the
// binary serves them itself.
package static

import "embed"

// FS holds every static asset.
//
//go:embed robots.txt
var FS embed.FS
