package weir

import "github.com/weirstream/weir/internal/transport"

// identitySettings lists the entries of meshSettings that identify the
// job's input (such as its sources' files, in order, with their sizes).
// None yet.
func (j *Job) identitySettings() []transport.Setting { return nil }
