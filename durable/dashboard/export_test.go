package dashboard

// EncodeID is encodeID, for the tests.
var EncodeID = encodeID
