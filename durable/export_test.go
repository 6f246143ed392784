package durable

// ShardTags exports shardTags to the tests.
var ShardTags = shardTags
