package nexmark

import "github.com/weirstream/weir/connector/gen"

// jsonField is a field of the JSON-lines form, of any kind of event.
type jsonField uint8

const (
	fKind jsonField = iota
	fID
	fName
	fEmail
	fCard
	fCity
	fState
	fDateTime
	fExtra
	fItemName
	fDescription
	fInitialBid
	fReserve
	fExpires
	fSeller
	fCategory
	fAuction
	fBidder
	fPrice
	fChannel
	fURL
	numJSONFields
)

var jsonFieldNames = [numJSONFields]string{
	"kind", "id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra",
	"itemName", "description", "initialBid", "reserve", "expires", "seller", "category",
	"auction", "bidder", "price", "channel", "url",
}

func (f jsonField) String() string { return jsonFieldNames[f] }

// numeric says whether a field's value is a number (else a string).
func (f jsonField) numeric() bool {
	switch f {
	case fID, fDateTime, fInitialBid, fReserve, fExpires, fSeller, fCategory, fAuction, fBidder, fPrice:
		return true
	}
	return false
}

// jsonFieldOf returns the field key names, or false.
func jsonFieldOf(key string) (jsonField, bool) {
	switch key {
	case "kind":
		return fKind, true
	case "id":
		return fID, true
	case "name":
		return fName, true
	case "emailAddress":
		return fEmail, true
	case "creditCard":
		return fCard, true
	case "city":
		return fCity, true
	case "state":
		return fState, true
	case "dateTime":
		return fDateTime, true
	case "extra":
		return fExtra, true
	case "itemName":
		return fItemName, true
	case "description":
		return fDescription, true
	case "initialBid":
		return fInitialBid, true
	case "reserve":
		return fReserve, true
	case "expires":
		return fExpires, true
	case "seller":
		return fSeller, true
	case "category":
		return fCategory, true
	case "auction":
		return fAuction, true
	case "bidder":
		return fBidder, true
	case "price":
		return fPrice, true
	case "channel":
		return fChannel, true
	case "url":
		return fURL, true
	}
	return 0, false
}

// kindFields are the fields of each kind of event, in the order of the
// JSON-lines form, kind aside.
var kindFields = [...][]jsonField{
	gen.PersonKind:  {fID, fName, fEmail, fCard, fCity, fState, fDateTime, fExtra},
	gen.AuctionKind: {fID, fItemName, fDescription, fInitialBid, fReserve, fDateTime, fExpires, fSeller, fCategory, fExtra},
	gen.BidKind:     {fAuction, fBidder, fPrice, fChannel, fURL, fDateTime, fExtra},
}

// kindMasks are kindFields as sets, kind included.
var kindMasks = func() (m [len(kindFields)]uint32) {
	for k, fs := range kindFields {
		m[k] = 1 << fKind
		for _, f := range fs {
			m[k] |= 1 << f
		}
	}
	return m
}()
