import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('yApA');
