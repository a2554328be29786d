import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('ggAh-AxXeAwl-KgjAguAw-fA');
