package gen

// YSBEvent is one ad event of the Yahoo Streaming Benchmark. The ids are
// strings (UUIDs), as in the benchmark; EventTime is in milliseconds since
// the Unix epoch.
type YSBEvent struct {
	UserID    string
	PageID    string
	AdID      string
	AdType    string
	EventType string
	EventTime int64
	IPAddress string
}
