package ui_test

import (
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/ui"
)

// A Job can record traces from the dashboard.
var _ ui.Tracer = (*weir.Job)(nil)
