package weir

import "github.com/weirstream/weir/internal/transport"

// identitySettings lists the job's identity (identity.go) as mesh
// settings: its operators with their parameters and each source's input
// (files in order, with their sizes; a generator's parameters), so that a
// process given other inputs is refused naming the source.
func (j *Job) identitySettings() []transport.Setting {
	id := j.identity()
	s := make([]transport.Setting, 0, len(id))
	for _, e := range id {
		switch e.Name {
		case "key-groups", "partitioning", "ordered":
			continue // named by their flags already
		}
		s = append(s, transport.Setting{Name: e.Name, Value: e.Value})
	}
	return s
}
