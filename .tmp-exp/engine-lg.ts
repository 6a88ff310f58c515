process.env.ONLY = 'lg-echo';
